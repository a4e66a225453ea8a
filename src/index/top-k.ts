/**
 * The `k` best of `ids` by `scores[id]`, best first; equal scores keep the lower id first so
 * results are stable across runs. A bounded min-heap: O(n log k) instead of sorting every match.
 */
export function selectTopK(ids: readonly number[], scores: ArrayLike<number>, k: number): [number, number][] {
  if (k <= 0) return [];
  const heap: number[] = [];
  // "worse" = lower score, or the same score and a higher id.
  const worse = (a: number, b: number) => scores[a]! < scores[b]! || (scores[a] === scores[b] && a > b);
  const siftDown = (from: number) => {
    let i = from;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < heap.length && worse(heap[left]!, heap[least]!)) least = left;
      if (right < heap.length && worse(heap[right]!, heap[least]!)) least = right;
      if (least === i) return;
      [heap[i], heap[least]] = [heap[least]!, heap[i]!];
      i = least;
    }
  };
  for (const id of ids) {
    if (heap.length < k) {
      heap.push(id);
      let i = heap.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!worse(heap[i]!, heap[parent]!)) break;
        [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
        i = parent;
      }
    } else if (worse(heap[0]!, id)) {
      heap[0] = id;
      siftDown(0);
    }
  }
  return heap.sort((a, b) => (worse(a, b) ? 1 : worse(b, a) ? -1 : 0)).map((id) => [id, scores[id]!]);
}
