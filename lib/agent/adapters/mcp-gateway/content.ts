// Tool results adapted to the protocol version the client negotiated: a content type or field newer
// than the client's version is turned into text it can read (or dropped), never sent as-is.
//   2025-06-18 added resource_link content and structuredContent;
//   2025-03-26 added audio content.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";

/** What the SDK's Server answers for a requested version (it echoes a supported one, else the latest). */
export function negotiatedVersion(requested: unknown): string {
  return typeof requested === "string" && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
}

type Item = CallToolResult["content"][number];

export function adaptResult(result: CallToolResult, version: string): CallToolResult {
  if (version >= "2025-06-18") return result;
  const content = result.content.map((c): Item => {
    const item = c as Item & { type: string; uri?: string; name?: string; mimeType?: string };
    if (item.type === "resource_link") return { type: "text", text: `${item.name ?? "resource"}: ${item.uri ?? ""}` };
    if (item.type === "audio" && version < "2025-03-26")
      return {
        type: "text",
        text: `[audio content (${item.mimeType ?? "audio"}) omitted: the client's protocol version ${version} has no audio]`,
      };
    return c;
  });
  const { structuredContent: _dropped, ...rest } = result;
  return { ...rest, content };
}
