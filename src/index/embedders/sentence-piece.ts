/**
 * The built-in sentence encoder's tokenizer: a unigram SentencePiece model (a vocabulary of
 * pieces with log-probabilities) segmented by Viterbi, giving the same ids as the encoder's own
 * package (`@energetic-ai/embeddings`), which the model was trained with. Written here because
 * the package's version copies the rest of the text at every character, which made a tool's
 * text cost 1–2 ms, and because the encoder needs the ids' counts up front to batch texts of
 * like length (use-lite-embedder.ts).
 *
 * The rules the ids depend on, kept as the package has them: the text is NFKC-normalised and
 * every space, and the start, becomes "▁"; the first `reserved` entries of the vocabulary are
 * never matched; a character no piece starts with becomes id 0, and a run of such characters one
 * id 0; among segmentations of equal score the one found last wins.
 */
export interface SentencePiece {
  encode(text: string): number[];
}

const WORD_START = "\u2581";
/** The vocabulary's first entries are control symbols (unknown, start, end, extras). */
const RESERVED = 6;

interface TrieNode {
  children: Map<number, TrieNode>;
  /** The vocabulary index of the piece that ends here, or -1. */
  index: number;
  score: number;
}

const newNode = (): TrieNode => ({ children: new Map(), index: -1, score: 0 });

export function createSentencePiece(vocabulary: readonly (readonly [string, number])[]): SentencePiece {
  const root = newNode();
  for (let index = RESERVED; index < vocabulary.length; index++) {
    const [piece, score] = vocabulary[index]!;
    let node = root;
    for (const char of piece) {
      const code = char.codePointAt(0)!;
      let next = node.children.get(code);
      if (!next) {
        next = newNode();
        node.children.set(code, next);
      }
      node = next;
    }
    node.index = index;
    node.score = score;
  }
  // How far back a chosen id steps: the length of its piece in UTF-16 units, as the package
  // steps (the same as its characters except outside the Basic Multilingual Plane).
  const stepOf = vocabulary.map(([piece]) => piece.length);

  return {
    encode(text) {
      const normalized = text.normalize("NFKC");
      const input = normalized.length > 0 ? WORD_START + normalized.replaceAll(" ", WORD_START) : "";
      const symbols: number[] = [];
      for (const char of input) symbols.push(char.codePointAt(0)!);
      const n = symbols.length;
      // best[i]: the score of the best segmentation of the first i symbols; 0 means none yet.
      const best = new Float64Array(n + 1);
      const word = new Int32Array(n + 1);
      for (let start = 0; start < n; start++) {
        const before = best[start]!;
        let node = root.children.get(symbols[start]!);
        let matched = false;
        for (let end = start + 1; node; end++) {
          if (node.index >= 0) {
            matched = true;
            const score = node.score + before;
            if (best[end] === 0 || score >= best[end]!) {
              best[end] = score;
              word[end] = node.index;
            }
          }
          if (end >= n) break;
          node = node.children.get(symbols[end]!);
        }
        if (!matched && (best[start + 1] === 0 || before >= best[start + 1]!)) {
          best[start + 1] = before;
          word[start + 1] = 0;
        }
      }
      const ids: number[] = [];
      let previousUnknown = false;
      for (let at = n; at > 0; at -= stepOf[word[at]!]!) {
        const id = word[at]!;
        if (!(previousUnknown && id === 0)) ids.push(id);
        previousUnknown = id === 0;
      }
      return ids.reverse();
    },
  };
}
