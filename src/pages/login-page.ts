import { page } from './html.js';

export const loginHtml = page(
  'Sign in',
  `<h1>Sign in to Trove</h1>
<form id="login">
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="username" required>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>
  <button type="submit">Sign in</button>
  <p role="alert" id="login-error"></p>
</form>
<details>
  <summary>No account yet? Create one</summary>
  <form id="register">
    <label for="reg-name">Name</label>
    <input id="reg-name" name="name" autocomplete="name" required>
    <label for="reg-email">Email</label>
    <input id="reg-email" name="email" type="email" autocomplete="username" required>
    <label for="reg-password">Password <span class="muted">(at least 10 characters)</span></label>
    <input id="reg-password" name="password" type="password" autocomplete="new-password" required minlength="10">
    <button type="submit">Create account</button>
    <p role="alert" id="register-error"></p>
  </form>
</details>`,
  '/login.js',
);

/** Sends the forms as JSON to the API and goes home on success; errors show the API's message. */
export const loginScript = `
async function submit(form, url, errorId) {
  const error = document.getElementById(errorId);
  error.textContent = '';
  const body = Object.fromEntries(new FormData(form));
  try {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.ok) { location.assign('/'); return; }
    const data = await res.json().catch(() => ({}));
    error.textContent = data.message || ('Request failed (' + res.status + ')');
  } catch {
    error.textContent = 'Trove could not be reached. Check your connection and try again.';
  }
}
document.getElementById('login').addEventListener('submit', (e) => { e.preventDefault(); submit(e.target, '/v1/auth/login', 'login-error'); });
document.getElementById('register').addEventListener('submit', (e) => { e.preventDefault(); submit(e.target, '/v1/auth/register', 'register-error'); });
`;
