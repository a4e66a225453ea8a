/**
 * Letters from other scripts that look like Latin ones, folded to the ASCII letter a reader takes
 * them for, so "Іgnore" (Cyrillic І) reads as "ignore". Only what NFKD and dropping combining marks
 * leave: fullwidth, mathematical and circled letters are already ASCII (or Greek, folded here) by
 * then. A compact table in the spirit of Unicode's confusables list, not a copy of it: letters of a
 * word written wholly in Cyrillic or Greek fold too, which is harmless, since the fold only feeds
 * the pattern match and English patterns do not match Russian or Greek words.
 */

/** Each entry: the look-alikes, then the ASCII letters they fold to, in the same order. */
const LETTERS: readonly [from: string, to: string][] = [
  // Cyrillic
  ["АВЕЅІЈКМНОРСТХУҮԀԚԜӀ", "ABESIJKMHOPCTXYYDQWI"],
  ["аеѕіјорсхуүһԁԛԝӏкмнтѵѡгпь", "aesijopcxyyhdqwlkmhtvwrnb"],
  // Greek (NFKD has already turned the lunate sigma and rho symbols into ς and ρ)
  ["ΑΒΕΖΗΙΚΜΝΟΡΤΥΧͿϜ", "ABEZHIKMNOPTYXJF"],
  ["αβγεικνορτυχωϳς", "abyeikvoptuxwjc"],
  // Armenian
  ["ՕՍՏԼ", "OUSL"],
  ["օսհոցզա", "ouhngqw"],
  // Cherokee
  ["ᎪᏴᏟᎬᏀᎻᎫᏦᏞᎷᏢᎡᏚᎢᏙᏔᏃᎥ", "ABCEGHJKLMPRSTVWZi"],
  // Latin small capitals, and Latin letters with a stroke or hook that NFKD does not decompose
  ["ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢғ", "abcdefghijklmnoprstuvwyzf"],
  ["ıȷɑɡɩøłđħŧƀɨɵʋ℮", "ijagioldhtbiove"],
];

/** Punctuation that stands in for ASCII in paths, hosts and contractions. */
const PUNCTUATION: readonly [from: string, to: string][] = [
  ["‘’‛′", "''''"],
  ["“”‟″", '""""'],
  ["‐‑‒–—―−﹘﹣", "---------"],
  ["∕⁄⧸╱", "////"],
  ["。︒·•∙⋅", "......"],
  ["∼", "~"],
];

const FOLD = new Map<string, string>();
for (const [from, to] of [...LETTERS, ...PUNCTUATION]) {
  const source = [...from];
  const target = [...to];
  if (source.length !== target.length) throw new Error(`confusables: ${from} and ${to} differ in length`);
  for (const [i, char] of source.entries()) FOLD.set(char, target[i]!);
}
FOLD.set("ß", "ss");
FOLD.set("æ", "ae");
FOLD.set("œ", "oe");

const FOLDABLE = new RegExp(`[${[...FOLD.keys()].join("").replace(/[\]\\^-]/g, "\\$&")}]`, "gu");
/** Regional indicator symbols (🇦–🇿) read as the letters they stand for. */
const REGIONAL = /[\u{1F1E6}-\u{1F1FF}]/gu;

/** The text with look-alike letters and punctuation replaced by their ASCII counterparts. */
export function foldConfusables(text: string): string {
  return text
    .replace(FOLDABLE, (char) => FOLD.get(char) ?? char)
    .replace(REGIONAL, (char) => String.fromCharCode(char.codePointAt(0)! - 0x1f1e6 + 65));
}
