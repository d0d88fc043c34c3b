/**
 * The charts of a page, loaded when they come into view (or near it): a
 * page of 80 charts fetches only what is on screen. After a range change
 * every chart is stale; those in view reload at once, the others when
 * they are scrolled to.
 */
export interface LazyCard {
  readonly root: HTMLElement;
  /** drawn for the current range */
  fresh: boolean;
  load(): Promise<void>;
  resize(): void;
  destroy(): void;
}

export class LazyCards<C extends LazyCard> {
  #cards: C[] = [];
  readonly #visible = new Set<C>();
  readonly #observer = new IntersectionObserver((entries) => this.#seen(entries), { rootMargin: '300px 0px' });

  get all(): readonly C[] {
    return this.#cards;
  }

  /** Replaces the cards (the old ones are destroyed) and watches the new ones; their roots must be in the page. */
  set(cards: readonly C[]): void {
    this.clear();
    this.#cards = [...cards];
    for (const c of this.#cards) this.#observer.observe(c.root);
  }

  clear(): void {
    this.#observer.disconnect();
    for (const c of this.#cards) c.destroy();
    this.#cards = [];
    this.#visible.clear();
  }

  /** The range changed: charts in view load now, the others when they come into view. */
  reloadAll(): Promise<void> {
    for (const c of this.#cards) c.fresh = false;
    return Promise.all([...this.#visible].map((c) => c.load())).then(() => undefined);
  }

  resizeAll(): void {
    for (const c of this.#cards) c.resize();
  }

  #seen(entries: IntersectionObserverEntry[]): void {
    for (const e of entries) {
      const card = this.#cards.find((c) => c.root === e.target);
      if (card === undefined) continue;
      if (e.isIntersecting) {
        this.#visible.add(card);
        if (!card.fresh) void card.load();
      } else this.#visible.delete(card);
    }
  }
}
