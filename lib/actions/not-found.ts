// Pages turn the dal's not_found (a missing resource, or another team's) into Next.js notFound(),
// so the browser gets the same 404 page for both and nothing leaks.
import "server-only";
import { notFound } from "next/navigation";
import { QuiesceError } from "../platform/errors";

export async function orNotFound<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if (err instanceof QuiesceError && err.code === "not_found") notFound();
    throw err;
  }
}
