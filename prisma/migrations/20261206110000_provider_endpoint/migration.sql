-- Where a provider of kind mcp or a2a is reached (docs/design/mcp-tasks.md): an http(s) URL, or for a stdio
-- MCP server its command as a JSON array. The barrier engine asks it for the task a gateway recorded.
ALTER TABLE "providers" ADD COLUMN "endpoint" TEXT;
