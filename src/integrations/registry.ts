import type { IntegrationClass } from './contract.js';

/**
 * The installed integrations: one folder each under src/integrations/. A name is looked up in
 * this list before anything is loaded, so no request can make the registry import a path of
 * its choosing (`../x`, `%2e%2e`, upper case: all simply not installed).
 */
export const INSTALLED = ['feed', 'gmail'] as const;
export type IntegrationName = (typeof INSTALLED)[number];

export function isInstalled(name: string): name is IntegrationName {
  return (INSTALLED as readonly string[]).includes(name);
}

const loaded = new Map<IntegrationName, Promise<IntegrationClass>>();

/** Loads an integration's module on first use; undefined when no such integration is installed. */
export function loadIntegration(name: string): Promise<IntegrationClass> | undefined {
  if (!isInstalled(name)) return undefined;
  let module = loaded.get(name);
  if (!module) {
    // Resolved at run time, not bundled: the test runner must not try to enumerate the folders.
    module = import(/* @vite-ignore */ `./${name}/index.js`).then((m: { default: IntegrationClass }) => m.default);
    loaded.set(name, module);
  }
  return module;
}

export async function allIntegrations(): Promise<IntegrationClass[]> {
  return Promise.all(INSTALLED.map((name) => loadIntegration(name)!));
}
