// Text that PostgreSQL cannot store or that no honest client sends: a NUL character (text and jsonb
// refuse it, which used to surface as a 500) and a lone UTF-16 surrogate (not valid Unicode; it
// cannot be encoded as UTF-8). Every string a caller hands us — body fields at any depth, object
// keys, query values and path ids — is checked before anything else reads it.

/** Why `s` is refused, or null when it is clean. */
export function unsafeTextReason(s: string): string | null {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0) return "must not contain a NUL character";
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return "must not contain a lone surrogate (not valid Unicode)";
    }
    if (c >= 0xdc00 && c <= 0xdfff) return "must not contain a lone surrogate (not valid Unicode)";
  }
  return null;
}

export interface UnsafeField {
  field: string;
  message: string;
}

/** The first string (value or object key) under `value` that is refused, named by its path. */
export function findUnsafeText(value: unknown, where: string, depth = 0): UnsafeField | null {
  if (typeof value === "string") {
    const why = unsafeTextReason(value);
    return why ? { field: where, message: why } : null;
  }
  if (value === null || typeof value !== "object" || depth > 64) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = findUnsafeText(value[i], `${where}.${i}`, depth + 1);
      if (hit) return hit;
    }
    return null;
  }
  for (const [k, v] of Object.entries(value)) {
    const keyWhy = unsafeTextReason(k);
    if (keyWhy) return { field: `${where}.${JSON.stringify(k)}`, message: `field name ${keyWhy}` };
    const hit = findUnsafeText(v, `${where}.${k}`, depth + 1);
    if (hit) return hit;
  }
  return null;
}

/** `%`, `_` and the escape character itself, escaped for a LIKE / ILIKE pattern (Prisma `contains`). */
export function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (m) => `\\${m}`);
}
