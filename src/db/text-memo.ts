// Values worked out once per list of texts: the statements a request sends on PostgreSQL are
// put together from the same few compiled texts every time (prepared.ts keeps each one as one
// string), so what is made of them (a combined statement, its text) can be kept. Looked up by
// each text in turn, not by one key joining them: a string keeps its hash once computed, so
// looking up the same string again costs nothing however long it is, where a joined key would
// be a new string to read through at every request.

interface Node<V> {
  next?: Map<string, Node<V>>;
  value?: V;
}

export class TextMemo<V> {
  private readonly root: Node<V> = {};
  private nodes = 0;

  /** @param nodesMax how many lists' steps are kept at most; past it, values are made and not kept. */
  constructor(private readonly nodesMax: number) {}

  /** The value kept for `texts`, or `make()`'s, kept when there is room. */
  get(texts: readonly string[], make: () => V): V {
    let node = this.root;
    for (const text of texts) {
      let next = node.next?.get(text);
      if (next === undefined) {
        if (this.nodes >= this.nodesMax) return make();
        next = {};
        node.next ??= new Map();
        node.next.set(text, next);
        this.nodes++;
      }
      node = next;
    }
    if (node.value === undefined) node.value = make();
    return node.value;
  }
}
