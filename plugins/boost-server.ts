/**
 * A custom ranker: favours one server's tools in every search, either by multiplying their scores
 * (`boost`) or by putting them first (`pin`). Useful when one server is the one your team means
 * by default ("create an issue" → your tracker, not a public one).
 *
 *   "plugins": [{ "path": "./boost-server.ts", "options": { "server": "linear", "boost": 1.5 } }]
 *   "plugins": [{ "path": "./boost-server.ts", "options": { "server": "linear", "pin": true } }]
 */
import * as v from "valibot";
import type { Plugin } from "../src/plugin-api.ts";

const Options = v.object({
  server: v.pipe(v.string(), v.nonEmpty("name the server whose tools to favour")),
  boost: v.optional(v.pipe(v.number(), v.minValue(0)), 1.5),
  pin: v.optional(v.boolean(), false),
});

let options: v.InferOutput<typeof Options> = { server: "", boost: 1, pin: false };

export default {
  name: "boost-server",
  optionsSchema: Options,
  setup(context) {
    options = context.options;
  },
  rankResults({ hits }) {
    const favoured = (hit: { server: string }) => hit.server === options.server;
    const rescored = hits.map((hit) =>
      favoured(hit) && !options.pin ? { ...hit, score: Math.min(1, hit.score * options.boost) } : hit,
    );
    // Stable: ties keep the search's order.
    return rescored
      .map((hit, at) => ({ hit, at }))
      .sort(
        (a, b) =>
          (options.pin ? Number(favoured(b.hit)) - Number(favoured(a.hit)) : 0) ||
          b.hit.score - a.hit.score ||
          a.at - b.at,
      )
      .map(({ hit }) => hit);
  },
} satisfies Plugin<v.InferOutput<typeof Options>>;
