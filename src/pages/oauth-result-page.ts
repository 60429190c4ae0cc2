import { escapeHtml, page } from './html.js';

/** The words of interface §7 for each `reason` code of decisions §6. */
const REASONS: Record<string, string> = {
  cancelled: 'authorization was cancelled',
  invalid_state: 'invalid state token',
  exchange_failed: 'failed to complete authorization',
};

const nameOf = (integration: string | undefined) => escapeHtml(integration?.slice(0, 100) || 'the integration');

export function oauthSuccessHtml(integration: string | undefined): string {
  return page(
    'Connected',
    `<h1>Connected</h1>
<p id="result">Trove is now connected to <strong>${nameOf(integration)}</strong>.</p>
<p><a href="/">Back to Trove</a></p>`,
  );
}

export function oauthErrorHtml(integration: string | undefined, reason: string | undefined): string {
  const text = (reason !== undefined && REASONS[reason]) || 'authorization did not complete';
  return page(
    'Not connected',
    `<h1>Not connected</h1>
<p id="result" role="alert">Connecting <strong>${nameOf(integration)}</strong> failed: ${escapeHtml(text)}.</p>
<p class="muted">Nothing was stored. You can start again from Trove.</p>
<p><a href="/">Back to Trove</a></p>`,
  );
}
