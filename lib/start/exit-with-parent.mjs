// Preloaded (node --import) into every process `npm start` runs. If `npm start` itself dies without
// cleaning up (SIGKILL, a closed terminal), its children would keep running, holding ports; when this
// process notices it was re-parented, it sends itself SIGTERM so its own graceful shutdown runs.
// Plain JavaScript so that it also preloads into `next start`, which runs without tsx.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.kill(process.pid, "SIGTERM");
}, 1000).unref();
