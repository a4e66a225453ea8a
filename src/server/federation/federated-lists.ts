import type { StandardSchemaV1 } from "@modelcontextprotocol/server";
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { describeError } from "../../errors.ts";
import type { FederationContext } from "./federation-context.ts";

/**
 * The federated lists (resources, resource templates, prompts): paged one upstream page at a time,
 * over the connected servers that declare the feature, in name order; a server that fails to list
 * is left out of that page and logged, not allowed to fail the whole list. Only what was approved
 * of a server's prompts and templates is listed, and nothing of a server held whole.
 */
type Feature = "resources" | "prompts";

/** Where each server's listing goes on: its own cursor, for the servers that have more. */
type Cursor = Record<string, string>;

const encodeCursor = (cursor: Cursor) => Buffer.from(JSON.stringify(cursor)).toString("base64url");

function decodeCursor(text: string | undefined): Cursor | undefined {
  if (text === undefined) return undefined;
  try {
    const cursor = JSON.parse(Buffer.from(text, "base64url").toString()) as unknown;
    if (cursor && typeof cursor === "object" && Object.values(cursor).every((c) => typeof c === "string"))
      return cursor as Cursor;
  } catch {}
  throw new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    "unknown cursor: pass the nextCursor of the previous page",
  );
}

/**
 * One page of a federated list: the next page of every server that has one (on the first page,
 * every connected server that declares the feature), its items renamed. A client that never
 * pages still sees every server; one whose servers page gets a cursor that goes on with them.
 */
export async function listPage<T extends StandardSchemaV1, K extends string>(
  federation: FederationContext,
  feature: Feature,
  method: string,
  schema: T,
  key: K,
  cursorText: string | undefined,
  rename: (server: string, item: Record<string, unknown>) => Record<string, unknown>,
  // The items are relayed as their servers sent them (renamed), not re-typed: `never[]` lets the
  // page stand for any list result.
): Promise<Record<K, never[]> & { nextCursor?: string }> {
  const { deps } = federation;
  const { pool, capabilities } = deps;
  /** Only what was approved of a server's prompts and templates is listed (the rest is held). */
  const pinned = (owner: string, items: Record<string, unknown>[]) => {
    const kind = key === "prompts" ? "prompt" : key === "resourceTemplates" ? "template" : undefined;
    return capabilities && kind ? capabilities.review(owner, kind, items as { name: string }[]) : items;
  };
  const from = decodeCursor(cursorText);
  await deps.ready?.();
  const servers = from
    ? Object.keys(from)
    : pool
        .live()
        .filter(({ connection }) => connection.client.getServerCapabilities()?.[feature])
        .map(({ server }) => server)
        .filter((owner) => !capabilities?.serverHold(owner))
        .sort();
  const next: Cursor = {};
  const answered: unknown[] = [];
  const pages = await Promise.all(
    servers.map(async (owner) => {
      try {
        const cursor = from?.[owner];
        const result = (await pool.request(
          owner,
          { method, params: cursor ? { cursor } : {} },
          schema,
        )) as Record<string, unknown>;
        if (capabilities?.serverHold(owner)) return [];
        answered.push(result);
        if (typeof result.nextCursor === "string" && result.nextCursor) next[owner] = result.nextCursor;
        const items = ((result[key] as Record<string, unknown>[] | undefined) ?? []).filter(
          (item) => item && typeof item === "object" && typeof item.name === "string",
        );
        return pinned(owner, items).map((item) => rename(owner, item));
      } catch (error) {
        deps.logger.child(owner).warn(`${method} failed: ${describeError(error)}`);
        return [];
      }
    }),
  );
  return federation.hinted(
    {
      [key]: pages.flat(),
      ...(Object.keys(next).length > 0 ? { nextCursor: encodeCursor(next) } : {}),
    },
    answered,
  ) as Record<K, never[]> & { nextCursor?: string };
}
