// Where the simulated deployment provider listens on this machine: `npm start` runs it on
// QUIESCE_PROVIDER_SIM_PORT (default 4700), the seeded `deploy-sim` row points there, and the demo
// fleet finds it there unless QUIESCE_PROVIDER_SIM_URL says otherwise.
import { setting } from "../platform/config";

export function simProviderUrl(port: number = setting("QUIESCE_PROVIDER_SIM_PORT")): string {
  return `http://127.0.0.1:${port}`;
}
