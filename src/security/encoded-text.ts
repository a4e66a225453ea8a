/**
 * Encodings a model reads through without being asked: HTML character references (`&#105;`,
 * `&#x69;`, `&lt;`) and URL percent-encoding (`%69%67`) are decoded in place before matching, and
 * runs of base64 or hex that decode to readable text are handed back to be scanned beside the text
 * they sit in. Every step is one pass of a linear expression over a bounded text.
 */

/** Named references that stand for ASCII punctuation or a space; letters have no short names. */
const NAMED: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  sol: "/",
  bsol: "\\",
  colon: ":",
  period: ".",
  comma: ",",
  semi: ";",
  excl: "!",
  quest: "?",
  num: "#",
  lpar: "(",
  rpar: ")",
  lsqb: "[",
  rsqb: "]",
  lcub: "{",
  rcub: "}",
  tilde: "~",
  grave: "`",
  lowbar: "_",
  hyphen: "-",
  dash: "-",
  equals: "=",
  commat: "@",
  verbar: "|",
  ast: "*",
  plus: "+",
  percnt: "%",
  dollar: "$",
};

const REFERENCE = /&(?:#x([0-9a-f]{1,6})|#([0-9]{1,7})|([a-z]{2,6}));?/gi;
const PERCENT_RUN = /(?:%[0-9a-f]{2})+/gi;

/**
 * The text with character references and percent-escapes decoded, twice at most (`&amp;#105;` is
 * `&#105;` once decoded, which a model reads as "i" too). Unknown names and code points that are
 * not characters stay as written.
 */
export function decodeEscapes(text: string): string {
  let out = text;
  for (let pass = 0; pass < 2 && (out.includes("&") || out.includes("%")); pass++) {
    const decoded = out.replace(REFERENCE, decodeReference).replace(PERCENT_RUN, decodePercentRun);
    if (decoded === out) break;
    out = decoded;
  }
  return out;
}

function decodeReference(reference: string, hex?: string, decimal?: string, name?: string): string {
  if (name !== undefined) return NAMED[name.toLowerCase()] ?? reference;
  const code = Number.parseInt((hex ?? decimal)!, hex === undefined ? 10 : 16);
  const isCharacter = code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff);
  return isCharacter ? String.fromCodePoint(code) : reference;
}

function decodePercentRun(run: string): string {
  try {
    return decodeURIComponent(run);
  } catch {
    // Not UTF-8: each byte as the Latin-1 character it names.
    return run.replace(/%([0-9a-f]{2})/gi, (_, byte: string) =>
      String.fromCharCode(Number.parseInt(byte, 16)),
    );
  }
}

/** Long enough to hold a sentence, short enough that most hashes and identifiers stay below it. */
const CANDIDATE_RUN = /[A-Za-z0-9+/]{24,8192}/g;
const HEX = /^(?:[0-9a-f]{2})+$/i;
const LETTERS_ONLY = /^[A-Za-z]+$/;
const MAX_PAYLOADS = 8;
const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * Text hidden as base64 or hex in a text, decoded: only what decodes to readable text of several
 * words counts (keys, hashes, images and identifiers decode to bytes and are left out).
 */
export function encodedPayloads(text: string): { encoding: "base64" | "hex"; text: string }[] {
  const found: { encoding: "base64" | "hex"; text: string }[] = [];
  if (text.length < 24) return found;
  for (const [run] of text.matchAll(CANDIDATE_RUN)) {
    // A word of letters alone (camelCase, a long name) is not worth decoding.
    if (LETTERS_ONLY.test(run)) continue;
    const encoding = HEX.test(run) ? "hex" : "base64";
    const readable = asReadable(encoding === "hex" ? fromHex(run) : fromBase64(run));
    if (readable !== undefined) found.push({ encoding, text: readable });
    if (found.length >= MAX_PAYLOADS) break;
  }
  return found;
}

function fromHex(run: string): Uint8Array {
  return Uint8Array.from(run.match(/../g)!, (pair) => Number.parseInt(pair, 16));
}

function fromBase64(body: string): Uint8Array | undefined {
  if (body.length % 4 === 1) return undefined;
  try {
    return Uint8Array.from(atob(body.padEnd(Math.ceil(body.length / 4) * 4, "=")), (char) =>
      char.charCodeAt(0),
    );
  } catch {
    return undefined;
  }
}

/** Decoded bytes as text when they read as prose: printable, with at least three spaced words. */
function asReadable(bytes: Uint8Array | undefined): string | undefined {
  if (bytes === undefined) return undefined;
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return undefined;
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters mean bytes, not prose
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufffd]/.test(text)) return undefined;
  return /[A-Za-z]{2,}[ \t\n]+[A-Za-z]{2,}[ \t\n]+[A-Za-z]{2,}/.test(text) ? text : undefined;
}
