import type { User } from '../users/repository.js';
import { escapeHtml, page } from './html.js';

export function homeHtml(user: User): string {
  return page(
    'Home',
    `<h1>Trove</h1>
<p>Signed in as <strong id="who">${escapeHtml(user.name)}</strong> (${escapeHtml(user.email)}).</p>
<p class="muted">Search and integrations arrive here soon. The API is described at <a href="/docs">/docs</a>.</p>
<button id="logout" type="button">Sign out</button>`,
    '/home.js',
  );
}

export const homeScript = `
document.getElementById('logout').addEventListener('click', async () => {
  const csrf = await fetch('/v1/auth/csrf').then((r) => r.json()).catch(() => ({}));
  await fetch('/v1/auth/logout', { method: 'POST', headers: { 'x-csrf-token': csrf.csrfToken || '' } });
  location.assign('/login');
});
`;
