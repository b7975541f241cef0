import { expect, test } from "vitest";
import { expandProviderUrl, jobPageUrl, jobUrlTemplateProblem } from "./provider-url";

const values = { providerJobId: "job 1/a", operationId: "op-1", runId: "run_1" };

test("placeholders are URL-encoded where they are put", () => {
  expect(jobPageUrl("https://d.example/jobs/{providerJobId}?op={operationId}", values)).toBe("https://d.example/jobs/job%201%2Fa?op=op-1");
  expect(expandProviderUrl("https://d.example/{runId}/{providerJobId}", { ...values, providerJobId: null })).toBe(
    "https://d.example/run_1/",
  );
});

test("no job page when the template names a value the operation lacks, or there is no template", () => {
  expect(jobPageUrl("https://d.example/jobs/{providerJobId}", { ...values, providerJobId: null })).toBeNull();
  expect(jobPageUrl(null, values)).toBeNull();
  expect(jobPageUrl("https://d.example/dashboard", values)).toBe("https://d.example/dashboard");
});

test("a template is an http(s) URL with known placeholders only", () => {
  expect(jobUrlTemplateProblem("https://deploy.example/jobs/{providerJobId}")).toBeNull();
  expect(jobUrlTemplateProblem("https://deploy.example/jobs/{providerOperationId}")).toContain("unknown placeholder {providerOperationId}");
  expect(jobUrlTemplateProblem("javascript:alert(1)//{providerJobId}")).toBe("an http(s) URL template");
  expect(jobUrlTemplateProblem("/jobs/{providerJobId}")).toBe("an http(s) URL template");
});
