import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import fc from "fast-check";
import { CONFIG, configProblems, readConfig, setting, type ConfigName } from ".";
import { DOC_PATH, withConfigTable } from "./docs";

describe("config", () => {
  test("unset and empty values take the default", () => {
    expect(setting("QUIESCE_DB_POOL", {})).toBe(10);
    expect(setting("QUIESCE_DB_POOL", { QUIESCE_DB_POOL: "  " })).toBe(10);
    expect(setting("QUIESCE_URL", {})).toBeUndefined();
    expect(setting("QUIESCE_DEMO", {})).toBe(true);
  });

  test("a valid value is parsed to its type", () => {
    expect(setting("QUIESCE_DB_POOL", { QUIESCE_DB_POOL: "25" })).toBe(25);
    expect(setting("QUIESCE_DEMO", { QUIESCE_DEMO: "OFF" })).toBe(false);
    expect(setting("QUIESCE_LOG_FORMAT", { QUIESCE_LOG_FORMAT: "pretty" })).toBe("pretty");
    expect(setting("QUIESCE_URL", { QUIESCE_URL: "https://q.example" })).toBe("https://q.example");
  });

  test("a bad value is an error naming the variable and the accepted range", () => {
    expect(() => setting("QUIESCE_DB_POOL", { QUIESCE_DB_POOL: "1O" })).toThrow(
      'QUIESCE_DB_POOL="1O" is not valid: expected an integer from 1 to 1000',
    );
    expect(() => setting("PORT", { PORT: "70000" })).toThrow(/PORT="70000" is not valid: expected an integer from 1 to 65535/);
    expect(() => setting("QUIESCE_URL", { QUIESCE_URL: "localhost:3000" })).toThrow(/QUIESCE_URL=.*expected a URL \(http, https\)/);
    expect(() => setting("QUIESCE_EVAL_SERVER", { QUIESCE_EVAL_SERVER: "nxt" })).toThrow(/one of "auto", "next", "handlers"/);
  });

  test("a secret's bad value is not echoed", () => {
    expect(() => setting("DATABASE_URL", { DATABASE_URL: "mysql://u:hunter2@h/db" })).toThrow("DATABASE_URL=(value hidden)");
  });

  test("no integer setting ever yields NaN or a value outside its range", () => {
    const ints = (Object.keys(CONFIG) as ConfigName[]).filter((n) => CONFIG[n].accepts.startsWith("an integer"));
    expect(ints.length).toBeGreaterThan(10);
    fc.assert(
      fc.property(fc.constantFrom(...ints), fc.string(), (name, raw) => {
        let v: unknown;
        try {
          v = setting(name, { [name]: raw });
        } catch {
          return true;
        }
        if (v === undefined) return raw.trim() === "";
        const [, min, max] = /from (-?\d+) to (-?\d+)/.exec(CONFIG[name].accepts)!;
        return Number.isInteger(v) && (v as number) >= Number(min) && (v as number) <= Number(max);
      }),
    );
  });

  test("readConfig lists every bad variable at once", () => {
    expect(configProblems({})).toEqual([]);
    expect(() => readConfig({ PORT: "x", QUIESCE_DB_POOL: "0" })).toThrow(/PORT=.*\n.*QUIESCE_DB_POOL=/);
  });

  test("the committed table in docs/configuration.md is up to date (npm run docs:config)", () => {
    const doc = readFileSync(DOC_PATH, "utf8");
    expect(withConfigTable(doc)).toBe(doc);
    for (const name of Object.keys(CONFIG)) expect(doc).toContain(`\`${name}\``);
  });
});
