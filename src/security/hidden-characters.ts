/**
 * Characters a person reviewing a tool does not see but the model reads, found by Unicode category
 * and property rather than by a list: format characters (Cf: zero-width characters, bidi controls,
 * the soft hyphen, U+061C, U+180E, tag characters…), controls (Cc, but tab, newline and carriage
 * return), variation selectors (U+FE00–FE0F, U+E0100–E01EF, Mongolian U+180B–180F), the Hangul
 * fillers and the combining grapheme joiner.
 */
const INVISIBLE =
  /(?![\t\n\r])[\p{Cc}\p{Cf}\u115F\u1160\u3164\uFFA0\u{E0000}-\u{E007F}]|\p{Variation_Selector}|\u034F/gu;

/** Fillers that render as a blank: read as a space, so words they separate stay apart. */
const BLANK = /[\u115F\u1160\u3164\uFFA0]/gu;

/*
 * Uses of these characters that real text needs, left out of the finding (they are still removed
 * before matching):
 * - One emoji presentation selector (U+FE0F, or U+FE0E) right after an emoji or a keycap base:
 *   keyboards insert it ("❤️"), and one of the 2,375 real tools of the eval set has it. Emoji
 *   smuggling needs a run of selectors, and a selector anywhere else still counts.
 * - A zero-width joiner inside an emoji sequence (👩‍💻).
 * - ZWNJ/ZWJ between letters of the scripts that need them for shaping (Persian writes ZWNJ in
 *   ordinary words), and Mongolian free variation selectors after a Mongolian letter; between
 *   Latin letters they still count.
 * - Tag characters of a subdivision flag (🏴 + two to six tag letters + cancel tag), too short to
 *   carry a message.
 */
const EMOJI_ZWJ =
  /(?<=[\p{Extended_Pictographic}\p{Emoji_Modifier}]\uFE0F?)\u200D(?=\p{Extended_Pictographic})/gu;
const EMOJI_PRESENTATION =
  /(?<=[\p{Extended_Pictographic}0-9#*])(?:\uFE0E|\uFE0F)(?!\p{Variation_Selector})/gu;
const SHAPING_SCRIPTS =
  "\\p{sc=Arabic}\\p{sc=Syriac}\\p{sc=Nko}\\p{sc=Devanagari}\\p{sc=Bengali}\\p{sc=Gurmukhi}\\p{sc=Gujarati}\\p{sc=Oriya}\\p{sc=Tamil}\\p{sc=Telugu}\\p{sc=Kannada}\\p{sc=Malayalam}\\p{sc=Sinhala}";
const SHAPING_JOINER = new RegExp(
  `(?<=[${SHAPING_SCRIPTS}][\\p{M}]*)[\\u200C\\u200D](?=[${SHAPING_SCRIPTS}])`,
  "gu",
);
const MONGOLIAN_SELECTOR = /(?<=\p{sc=Mongolian})(?:\u180B|\u180C|\u180D|\u180F)/gu;
const FLAG_TAGS = /(?<=\u{1F3F4})[\u{E0030}-\u{E0039}\u{E0061}-\u{E007A}]{2,6}\u{E007F}/gu;

const ASCII_TEXT = /^[\t\n\r\x20-\x7E]*$/;

/** The invisible characters of a text as `U+XXXX`, each once, in the order they first appear. */
export function invisibleCharacters(text: string): string[] {
  if (ASCII_TEXT.test(text)) return [];
  const suspect = text
    .replace(FLAG_TAGS, "")
    .replace(EMOJI_ZWJ, "")
    .replace(EMOJI_PRESENTATION, "")
    .replace(SHAPING_JOINER, "")
    .replace(MONGOLIAN_SELECTOR, "");
  return [...new Set(suspect.match(INVISIBLE) ?? [])].map(codePointLabel);
}

/** The text as a reader sees it: blank fillers become spaces, other invisible characters go. */
export function withoutInvisible(text: string): string {
  return text.replace(BLANK, " ").replace(INVISIBLE, "");
}

const TAG_RUN = /[\u{E0020}-\u{E007E}]{3,}/gu;
const SELECTOR_RUN = /[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]{3,}/gu;
const decoder = new TextDecoder("utf-8");

/**
 * Text smuggled in invisible characters, decoded so it can be scanned like visible text: ASCII
 * spelled in tag characters (U+E0020–E007E), and bytes spelled in variation selectors (U+FE00–FE0F
 * for 0–15, U+E0100–E01EF for 16–255, the "emoji smuggling" encoding).
 */
export function smuggledText(text: string): string[] {
  if (ASCII_TEXT.test(text)) return [];
  const tags = [...text.replace(FLAG_TAGS, "").matchAll(TAG_RUN)].map(([run]) =>
    [...run].map((char) => String.fromCharCode(char.codePointAt(0)! - 0xe0000)).join(""),
  );
  const selectors = [...text.matchAll(SELECTOR_RUN)].map(([run]) =>
    decoder.decode(
      Uint8Array.from([...run], (char) => {
        const code = char.codePointAt(0)!;
        return code <= 0xfe0f ? code - 0xfe00 : code - 0xe0100 + 16;
      }),
    ),
  );
  return [...tags, ...selectors];
}

/**
 * What a terminal or a page would not show as itself: controls (tab and line breaks too), format
 * characters (the bidi embeddings, overrides and isolates U+202A–202E and U+2066–2069 that can
 * make text display in another order than it runs: "Trojan Source"), line and paragraph
 * separators, lone surrogates and the invisible characters above, with none of their exceptions.
 */
const UNSHOWN =
  /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\u115F\u1160\u3164\uFFA0\u{E0000}-\u{E007F}]|\p{Variation_Selector}|\u034F/gu;

/**
 * A text as a person is shown it for a decision (`mcpproxy approve`): every character of UNSHOWN
 * written as `\uXXXX` (one escape per UTF-16 unit, so JSON text stays JSON), the rest as it is.
 * `keepLineBreaks` leaves newlines alone, for text of several lines or pretty-printed JSON (whose
 * strings never hold a raw newline).
 */
export function escapeUnshown(text: string, options: { keepLineBreaks?: boolean } = {}): string {
  if (ASCII_VISIBLE.test(text)) return text;
  return text.replace(UNSHOWN, (char) =>
    options.keepLineBreaks && char === "\n"
      ? char
      : char
          .split("")
          .map((unit) => `\\u${unit.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`)
          .join(""),
  );
}

const ASCII_VISIBLE = /^[\x20-\x7E]*$/;

function codePointLabel(char: string): string {
  return `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
}
