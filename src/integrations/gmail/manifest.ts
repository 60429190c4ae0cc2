import type { IntegrationManifest } from '../contract.js';

export const manifest: IntegrationManifest = {
  name: 'gmail',
  title: 'Gmail',
  description: 'Your Gmail messages, read-only. Connect by signing in with Google.',
  kinds: ['email'],
  auth: 'oauth',
  // Nothing to type in: the OAuth flow obtains the credentials.
  credentialFields: [],
  credentialsSchema: { type: 'object', properties: {}, additionalProperties: false },
  oauth: true,
};
