const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => entities[c] ?? c);
}

/** A whole page; scripts come from files on this origin only, so the strict CSP holds. */
export function page(title: string, body: string, script?: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Trove</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 26rem; margin: 4rem auto; padding: 0 1rem; color: #1d2330; }
  h1 { font-size: 1.6rem; } label { display: block; margin: .8rem 0 .2rem; }
  input { width: 100%; padding: .5rem; font: inherit; box-sizing: border-box; }
  button { margin-top: 1rem; padding: .5rem 1.2rem; font: inherit; cursor: pointer; }
  [role=alert] { color: #a11; min-height: 1.5em; } .muted { color: #667; }
</style>
</head>
<body>
${body}
${script ? `<script src="${script}" defer></script>` : ''}
</body>
</html>`;
}
