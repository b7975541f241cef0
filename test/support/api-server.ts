// The tests' API server is the production one (`quiesce api`): the real route modules over node:http.
export { startApiServer, type ApiServer, type ApiServerOptions } from "../../lib/api/node-server";
