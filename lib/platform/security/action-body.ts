// A server action's body limit, enforced before Next reads the body. Next refuses a body past
// `serverActions.bodySizeLimit` (next.config.mjs) only once it has read that far, and then answers 500
// with an opaque error; proxy.ts answers by the declared length instead: 413 with a plain-text message,
// which is what the browser's action call throws (React reads a text/plain error body as the message).

/** next.config.mjs sets serverActions.bodySizeLimit to "1mb", which Next reads as this many bytes. */
export const ACTION_BODY_LIMIT_BYTES = 1024 * 1024;

export interface ActionBodyRefusal {
  status: 411 | 413;
  message: string;
}

/** Why a server action request (a POST with a Next-Action header) is refused for its size, or null. */
export function actionBodyRefusal(method: string, headers: Headers): ActionBodyRefusal | null {
  if (method !== "POST" || !headers.has("next-action")) return null;
  const declared = headers.get("content-length");
  if (declared === null) {
    // Browsers declare the length of every action they send; a stream of unknown length is not one of them.
    return headers.has("transfer-encoding") ? { status: 411, message: "input: a server action must declare its Content-Length" } : null;
  }
  if (!/^\d{1,15}$/.test(declared.trim())) return { status: 413, message: "input: Content-Length is not a byte count" };
  if (Number(declared) > ACTION_BODY_LIMIT_BYTES)
    return { status: 413, message: `input: larger than 1 MB (${ACTION_BODY_LIMIT_BYTES} bytes): send less at a time` };
  return null;
}
