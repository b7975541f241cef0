export default function Home() {
  return (
    <main>
      <h1>Quiesce</h1>
      <p>The control plane that makes &ldquo;stop the agent&rdquo; true: it revokes a run&rsquo;s authority at every gate,
        cancels (and keeps) work that has not started, settles in-flight calls, and issues a stop receipt.</p>
      <ul>
        <li><a href="/api/v1/openapi.json">Machine API (OpenAPI 3.1)</a></li>
      </ul>
    </main>
  );
}
