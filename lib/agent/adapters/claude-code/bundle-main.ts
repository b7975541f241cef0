// What esbuild bundles: run the hook with the process's arguments.
import { main } from "./entry";

void main(process.argv.slice(2));
