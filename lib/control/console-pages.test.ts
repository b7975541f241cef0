import { describe, expect, test } from "vitest";
import { forbiddenMessage, gatedPage, GATED_PAGES, mayOpen } from "./console-pages";
import { ROLES } from "./types";

describe("console pages a role may not open", () => {
  test("the 403 names the role, the page and who may open it", () => {
    expect(forbiddenMessage("viewer", gatedPage("/webhooks"))).toEqual({
      title: "Viewers can't open Webhooks; ask an admin.",
      detail: "Only admins may open Webhooks. An admin of this team can change your role on the People page.",
    });
    expect(forbiddenMessage("viewer", gatedPage("/audit")).detail).toMatch(/^Only operators, managers and admins may open the Audit log\./);
    expect(forbiddenMessage("manager", gatedPage("/keys/abc")).title).toBe("Managers can't open API keys; ask an admin.");
    expect(forbiddenMessage("operator", null).title).toBe("Operators can't open this page");
  });

  test("pages are matched by whole path segments", () => {
    expect(gatedPage("/people")?.name).toBe("People");
    expect(gatedPage("/peoplex")).toBeNull();
    expect(gatedPage("/runs")).toBeNull();
  });

  test("admins open every gated page; a viewer none", () => {
    for (const p of GATED_PAGES) {
      expect(mayOpen("admin", p)).toBe(true);
      expect(mayOpen("viewer", p)).toBe(false);
    }
    // Whoever the message says may open a page, may; nobody else.
    for (const p of GATED_PAGES)
      for (const r of ROLES) {
        const named = forbiddenMessage("viewer", p).detail.includes(`${r}s`);
        expect(named, `${r} ${p.path}`).toBe(mayOpen(r, p));
      }
  });
});
