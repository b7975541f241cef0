// A page URL whose path does not decode (`/runs/%E0%A4%A`, `/%`) cannot name anything: proxy.ts answers
// it with 400 and this page, before Next.js tries to decode the route parameters (which answered a bare
// "Internal Server Error"). Pure: no I/O, so the proxy (edge-style runtime) can use it.

/** True when a path segment is not valid percent-encoded UTF-8. */
export function isMalformedPath(pathname: string): boolean {
  try {
    decodeURIComponent(pathname);
    return false;
  } catch {
    return true;
  }
}

/** The console's error page for a malformed address, self-contained (styles inline: the CSP allows them). */
export function malformedUrlPage(): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>Bad address · Quiesce</title>
<style>
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;background:#f6f7f9;color:#14171c}
.box{max-width:640px;margin:3rem auto;padding:1.5rem 1.75rem;background:#fff;border:1px solid #d8dce3;border-radius:8px}
h1{font-size:1.1rem;margin:0 0 .5rem}a{color:#1746a2}
@media (prefers-color-scheme:dark){body{background:#0f1216;color:#e7eaee}.box{background:#171b21;border-color:#2c323b}a{color:#8fb3ff}}
</style></head>
<body><main class="box" role="alert"><h1>400 — this address is not valid</h1>
<p>The link is malformed (a broken percent-encoding, such as <code>%E0%A4%A</code>), so it cannot name a run, a receipt or any other page. It was probably cut short when it was copied.</p>
<p><a href="/runs">Back to runs</a></p></main></body></html>`;
}
