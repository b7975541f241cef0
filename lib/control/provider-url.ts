// A provider's URL templates (docs/adapters/mcp-gateway.md#registering-a-provider): its cancel, status and
// compensate calls, and the job page the console links. One set of placeholders, URL-encoded where put.

export const PROVIDER_URL_PLACEHOLDERS = ["providerJobId", "operationId", "runId"] as const;
export type ProviderUrlPlaceholder = (typeof PROVIDER_URL_PLACEHOLDERS)[number];
export type ProviderUrlValues = Record<ProviderUrlPlaceholder, string | null>;

const PLACEHOLDER = /\{(providerJobId|operationId|runId)\}/g;
const ANY_BRACES = /\{([^{}]*)\}/g;

export function hasPlaceholder(template: string): boolean {
  return template.search(PLACEHOLDER) >= 0;
}

/** Every placeholder filled (a missing value as the empty string): the provider calls' form. */
export function expandProviderUrl(template: string, values: ProviderUrlValues): string {
  return template.replace(PLACEHOLDER, (_m, k: ProviderUrlPlaceholder) => encodeURIComponent(values[k] ?? ""));
}

/** The job page of one operation, or null when the template names a value the operation does not have (no link beats a wrong one). */
export function jobPageUrl(template: string | null, values: ProviderUrlValues): string | null {
  if (!template) return null;
  for (const m of template.matchAll(PLACEHOLDER)) if (!values[m[1] as ProviderUrlPlaceholder]) return null;
  return expandProviderUrl(template, values);
}

/** Why a job-page template is refused, or null: only known placeholders, and an http(s) URL once they are filled. */
export function jobUrlTemplateProblem(template: string): string | null {
  const unknown = [...template.matchAll(ANY_BRACES)]
    .map((m) => m[1]!)
    .filter((k) => !(PROVIDER_URL_PLACEHOLDERS as readonly string[]).includes(k));
  if (unknown.length) return `unknown placeholder {${unknown[0]}}: use ${PROVIDER_URL_PLACEHOLDERS.map((k) => `{${k}}`).join(", ")}`;
  const sample = expandProviderUrl(template, { providerJobId: "job", operationId: "op", runId: "run" });
  if (!URL.canParse(sample) || !/^https?:$/.test(new URL(sample).protocol)) return "an http(s) URL template";
  return null;
}
