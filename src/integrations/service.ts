import type { Config } from '../config.js';
import type { SecretBox } from '../crypto/secret-box.js';
import {
  CredentialsInvalidError,
  IntegrationAlreadyConnectedError,
  IntegrationNotFoundError,
  OAuthOnlyIntegrationError,
  UserIntegrationNotFoundError,
} from '../domain-errors.js';
import { compileDataValidator } from '../http/validation.js';
import { pageOf, type Page, type PageRequest } from '../paging.js';
import {
  CredentialsRejectedError,
  supportsOAuth,
  type ContentExistsChecker,
  type Credentials,
  type Integration,
  type IntegrationClass,
  type IntegrationManifest,
} from './contract.js';
import { allIntegrations, loadIntegration } from './registry.js';
import { LiveConnectionExistsError, type SealedRecord, type UserIntegration, type UserIntegrationsRepository } from './repository.js';

/** How long a provider may take to answer while a connection is being checked. */
export const PROVIDER_TIMEOUT_MS = 10_000;

export interface IntegrationInfo extends IntegrationManifest {
  /** OAuth client id and secret set on this server; always true for credentials integrations. */
  configured: boolean;
}

interface Deps {
  repository: UserIntegrationsRepository;
  box: SecretBox;
  config: Config;
}

/** Looks an integration up by the name a request gave; unknown names never reach the loader's import. */
export async function integrationNamed(name: string): Promise<IntegrationClass> {
  const cls = await loadIntegration(name);
  if (!cls) throw new IntegrationNotFoundError();
  return cls;
}

/**
 * The caller's connections (decisions §7): the catalog, connecting with credentials, storing
 * what an OAuth flow obtained, disconnecting, and re-sealing everything under the newest key.
 */
export class UserIntegrationsService {
  private readonly validators = new WeakMap<IntegrationClass, (data: unknown) => string | undefined>();

  constructor(private readonly deps: Deps) {}

  async catalog(): Promise<IntegrationInfo[]> {
    return (await allIntegrations()).map((cls) => {
      const settings = this.deps.config.integration(cls.manifest.name);
      const configured = !supportsOAuth(cls) || (settings.clientId !== undefined && settings.clientSecret !== undefined);
      return { ...cls.manifest, configured };
    });
  }

  async list(input: { userId: string } & PageRequest): Promise<Page<UserIntegration>> {
    const rows = await this.deps.repository.listLiveByUser({ userId: input.userId });
    const page = pageOf(
      rows.map((row) => ({ row, id: row.id, createdAt: Date.parse(row.createdAt) })),
      input,
    );
    return { ...page, results: page.results.map((item) => item.row) };
  }

  /**
   * A credentials integration: the manifest's schema first (cheap, names the field), then the
   * integration's own check against the provider, and only then is anything stored.
   */
  async connectWithCredentials(input: { userId: string; integration: string; credentials: unknown }): Promise<UserIntegration> {
    const cls = await integrationNamed(input.integration);
    if (supportsOAuth(cls) || cls.manifest.auth === 'oauth') throw new OAuthOnlyIntegrationError();
    const problem = this.validatorFor(cls)(input.credentials);
    if (problem) throw new CredentialsInvalidError(problem);
    const credentials = input.credentials as Credentials;
    // Asked before the provider is contacted, so a duplicate costs no outbound request.
    if (await this.deps.repository.findLive({ userId: input.userId, integration: input.integration })) {
      throw new IntegrationAlreadyConnectedError();
    }

    const instance = new cls(credentials, undefined, {
      settings: this.deps.config.integration(input.integration),
      timeoutMs: PROVIDER_TIMEOUT_MS,
    });
    let accepted: boolean;
    try {
      accepted = await instance.validateAuthentication();
    } catch (err) {
      if (err instanceof CredentialsRejectedError) throw new CredentialsInvalidError(`Credentials rejected: ${err.message}`);
      throw err;
    } finally {
      await instance.shutdown();
    }
    if (!accepted) throw new CredentialsInvalidError('Credentials rejected: the provider did not accept them');

    try {
      return await this.deps.repository.insertLive({
        userId: input.userId,
        integration: input.integration,
        seal: (id) => this.seal(credentials, id),
      });
    } catch (err) {
      if (err instanceof LiveConnectionExistsError) throw new IntegrationAlreadyConnectedError();
      throw err;
    }
  }

  /** What an OAuth callback obtained; a reconnect replaces the live connection's credentials. */
  storeOAuthCredentials(input: { userId: string; integration: string; credentials: Credentials }): Promise<UserIntegration> {
    return this.deps.repository.upsertLive({
      userId: input.userId,
      integration: input.integration,
      seal: (id) => this.seal(input.credentials, id),
    });
  }

  async disconnect(input: { userId: string; id: string }): Promise<void> {
    if (!(await this.deps.repository.softDelete(input))) throw new UserIntegrationNotFoundError();
  }

  /** Decrypted credentials of one connection, for the code that talks to the provider. */
  async credentialsOf(input: { id: string }): Promise<Credentials | undefined> {
    const record = await this.deps.repository.findSealed(input);
    return record && this.open(record);
  }

  /**
   * A working instance of a stored connection, for the code that syncs it (the task system):
   * when the integration renews its credentials (a refreshed access token), they are sealed
   * and stored again in the same row.
   */
  async instanceOf(input: { id: string; contentExists?: ContentExistsChecker }): Promise<Integration | undefined> {
    const record = await this.deps.repository.findSealed({ id: input.id });
    if (!record) return undefined;
    const cls = await integrationNamed(record.integration);
    return new cls(this.open(record), input.contentExists, {
      settings: this.deps.config.integration(record.integration),
      timeoutMs: PROVIDER_TIMEOUT_MS,
      saveCredentials: async (credentials) => {
        await this.deps.repository.replaceSealed({ id: record.id, credentials: this.seal(credentials, record.id) });
      },
    });
  }

  /** Re-seals every record not already under the newest key; returns how many it re-sealed. */
  async reencryptAll(): Promise<{ resealed: number; total: number }> {
    const { box, repository } = this.deps;
    const records = await repository.listAllSealed();
    let resealed = 0;
    for (let record of records) {
      // A record the server changed meanwhile (a refreshed token) is read again and retried.
      for (let attempt = 0; box.keyIdOfSealed(record.credentials) !== box.currentKeyId; attempt++) {
        const sealed = this.seal(this.open(record), record.id);
        if (await repository.replaceSealed({ id: record.id, credentials: sealed, ifCurrently: record.credentials })) {
          resealed += 1;
          break;
        }
        const fresh = attempt < 3 ? await repository.findSealedIncludingDeleted({ id: record.id }) : undefined;
        if (!fresh) throw new Error(`record ${record.id} kept changing during re-encryption; run the command again`);
        record = fresh;
      }
    }
    return { resealed, total: records.length };
  }

  private seal(credentials: Credentials, id: string): string {
    return this.deps.box.seal(JSON.stringify(credentials), id);
  }

  private open(record: SealedRecord): Credentials {
    return JSON.parse(this.deps.box.open(record.credentials, record.id)) as Credentials;
  }

  private validatorFor(cls: IntegrationClass): (data: unknown) => string | undefined {
    let validate = this.validators.get(cls);
    if (!validate) {
      validate = compileDataValidator(cls.manifest.credentialsSchema, 'body/credentials');
      this.validators.set(cls, validate);
    }
    return validate;
  }
}
