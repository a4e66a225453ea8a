import * as v from "valibot";
import type { ExpansionProblem } from "./expand-env.ts";
import { unknownKeys } from "./known-keys.ts";

/**
 * `mcpproxy.profiles`: named subsets of the catalog, each served at its own endpoint
 * (`/mcp/p/<name>`, `serve --profile <name>`). A person's setting of the file only: no environment
 * variable, no flag, and `upstream_servers` cannot write it (nor a server's `tags`).
 */
export interface ProfileSettings {
  /** Servers chosen by name. */
  servers: readonly string[];
  /** Servers chosen by any of their `tags`. */
  tags: readonly string[];
  /** Glob patterns over tools (`*`, `?`); `!pattern` leaves tools out (profile-selector.ts). */
  tools: readonly string[];
}

export type Profiles = Readonly<Record<string, ProfileSettings>>;

/** A profile name goes into a URL path and a command line as it is; a server's tags are spelled alike. */
export const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const PROFILE_KEYS = ["servers", "tags", "tools"] as const;

const names = (what: string) =>
  v.array(
    v.pipe(v.string(`must be ${what}`), v.nonEmpty("must not be empty")),
    `must be an array of ${what}s`,
  );

const PATTERN = v.pipe(
  v.string("must be a tool pattern"),
  v.check((text) => text.replace(/^!/, "").length > 0, "must not be empty"),
  v.check((text) => text.split("/").length <= 2, "may hold one '/' at most (server/tool)"),
);

const ProfileSchema = v.object({
  servers: v.optional(names("server name"), []),
  tags: v.optional(names("tag"), []),
  tools: v.optional(v.array(PATTERN, "must be an array of tool patterns"), []),
});

/** Parses `mcpproxy.profiles` (already `${VAR}`-expanded); each problem names its path. */
export function parseProfiles(raw: unknown, problems: ExpansionProblem[]): Profiles {
  if (raw === undefined) return {};
  const path = "mcpproxy.profiles";
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    problems.push({ path, message: 'must be an object of profiles, {"<name>": {"servers": [...]}}' });
    return {};
  }
  const profiles: Record<string, ProfileSettings> = {};
  for (const [name, entry] of Object.entries(raw as Record<string, unknown>)) {
    const at = `${path}.${name}`;
    if (!PROFILE_NAME.test(name)) {
      problems.push({
        path: at,
        message:
          "a profile name must be letters, digits, '.', '_' or '-' (at most 64), starting with a letter or digit",
      });
      continue;
    }
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
      problems.push({ path: at, message: 'must be an object with "servers", "tags" and/or "tools"' });
      continue;
    }
    const unknown = unknownKeys(entry as Record<string, unknown>, PROFILE_KEYS, at);
    problems.push(...unknown);
    const parsed = v.safeParse(ProfileSchema, entry);
    if (!parsed.success) {
      for (const issue of parsed.issues) {
        const keys = (issue.path ?? []).map((item) => String(item.key)).join(".");
        problems.push({ path: keys ? `${at}.${keys}` : at, message: issue.message });
      }
      continue;
    }
    if (unknown.length === 0) profiles[name] = parsed.output;
  }
  return profiles;
}
