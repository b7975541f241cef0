// `quiesce providers` as a real process against the real database: add registers through the same write
// as the API (a stdio MCP server and a loopback URL included: the deployment's own CLI is not judged),
// list shows them; a bad flag or bad input is exit 2 with the reason, and writes nothing.
import { expect, test } from "vitest";
import { CLI_TEST_TIMEOUT, runCliAll, type CliResult } from "./run-cli";
import { prisma } from "../../lib/platform/db/prisma";
import { makeTeam } from "../support/fixtures";

test(
  "add and list; bad flags and bad input exit 2 and write nothing",
  async () => {
    const t = await makeTeam("cli providers");
    const team = ["--team", t.slug];
    const [stdio, http, list] = (await runCliAll(
      [
        ["providers", "add", ...team, "--name", "local-mcp", "--kind", "mcp", "--quiet-period", "5", "--", "node", "server.js", "--stdio"],
        [
          "providers",
          "add",
          ...team,
          "--name",
          "agent",
          "--kind",
          "a2a",
          "--url",
          "http://127.0.0.1:9/a2a",
          "--job-url",
          "https://agents.example/tasks/{providerJobId}",
          "--json",
        ],
        ["providers", "list", ...team, "--json"],
      ],
      {},
      1,
    )) as [CliResult, CliResult, CliResult];
    expect(stdio, stdio.stderr).toMatchObject({ code: 0 });
    expect(stdio.stdout).toContain("provider local-mcp (mcp) registered");
    expect(http.code, http.stderr).toBe(0);
    expect(JSON.parse(http.stdout)).toMatchObject({
      name: "agent",
      kind: "a2a",
      url: "http://127.0.0.1:9/a2a",
      jobUrl: "https://agents.example/tasks/{providerJobId}",
    });
    expect(JSON.parse(list.stdout)).toMatchObject([
      { name: "agent", kind: "a2a" },
      { name: "local-mcp", kind: "mcp", command: ["node", "server.js", "--stdio"], url: null, quietPeriodSeconds: 5 },
    ]);
    const row = await prisma().provider.findFirstOrThrow({ where: { teamId: t.teamId, name: "local-mcp" } });
    expect(JSON.parse(row.endpoint!)).toEqual(["node", "server.js", "--stdio"]);

    const refused = await runCliAll([
      ["providers", "add", ...team, "--name", "x", "--kind", "grpc", "--url", "http://1.1.1.1/"],
      ["providers", "add", ...team, "--name", "x", "--kind", "mcp", "--"],
      ["providers", "add", ...team, "--name", "x", "--kind", "a2a", "--url", "http://1.1.1.1/", "--quiet-period", "soon"],
      ["providers", "add", ...team, "--name", "x", "--kind", "a2a", "--url", "http://1.1.1.1/", "--colour", "red"],
      ["providers", "add", ...team, "--name", "x", "--kind", "a2a", "--url", "ftp://1.1.1.1/"],
      ["providers", "add", ...team, "--name", "x", "--kind", "a2a", "--url", "http://1.1.1.1/", "--job-url", "https://d.example/{job}"],
      ["providers", "add", ...team, "--name", "agent", "--kind", "a2a", "--url", "http://1.1.1.1/"],
      ["providers", "remove", "agent"],
    ]);
    const said = [
      "--kind",
      "a command is required after --",
      "--quiet-period",
      "colour",
      "url: an http(s) URL",
      "jobUrl: unknown placeholder {job}",
      "already has",
      "unknown subcommand",
    ];
    refused.forEach((r, i) => {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(said[i]);
    });
    expect(refused[0]!.stderr).toContain("usage:");
    expect(await prisma().provider.count({ where: { teamId: t.teamId } })).toBe(2);
  },
  CLI_TEST_TIMEOUT * 3,
);
