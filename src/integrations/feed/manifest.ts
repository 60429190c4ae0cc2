import type { IntegrationManifest } from '../contract.js';

export const URL_MAX_LENGTH = 2048;

export const manifest: IntegrationManifest = {
  name: 'feed',
  title: 'RSS and Atom feed',
  description: 'Follows one RSS or Atom feed (a blog, a news site, a podcast) and makes its entries searchable.',
  kinds: ['feed'],
  auth: 'credentials',
  credentialFields: [
    {
      name: 'url',
      label: 'Feed address',
      type: 'url',
      required: true,
      secret: false,
      description: 'The address of the feed itself (http or https), not of the web page that links to it.',
    },
    {
      name: 'username',
      label: 'Username',
      type: 'string',
      required: false,
      secret: false,
      description: 'Only for a feed behind a password (HTTP basic authentication).',
    },
    {
      name: 'password',
      label: 'Password',
      type: 'password',
      required: false,
      secret: true,
      description: 'Only with a username.',
    },
  ],
  credentialsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['url'],
    properties: {
      url: {
        type: 'string',
        format: 'uri',
        // format "uri" accepts any scheme (file:, ftp:, javascript:); only the web is fetched.
        pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+',
        minLength: 1,
        maxLength: URL_MAX_LENGTH,
      },
      username: { type: 'string', minLength: 1, maxLength: 256 },
      password: { type: 'string', minLength: 1, maxLength: 1024 },
    },
    // Draft-07 "dependencies" rather than 2019-09 "dependentRequired": Ajv's default class knows
    // the former, and without strict mode it would silently ignore the latter.
    dependencies: { password: ['username'] },
  },
};
