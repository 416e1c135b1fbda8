/// <reference lib="dom" />
/**
 * localStorage with an in-memory fallback: when storage is blocked (or fails
 * later), the ids live in memory while the tab stays open. The widget sets
 * no cookies.
 */

export interface Store {
  get(key: string): string | null;
  set(key: string, value: string): void;
  del(key: string): void;
}

export function createStore(): Store {
  const memory: Record<string, string> = {};
  // Reading localStorage itself throws where storage is blocked.
  const disk = (): Storage | null => {
    let storage: Storage | null = null;
    try {
      storage = localStorage;
    } catch { /* blocked */ }
    return storage;
  };
  return {
    get(key) {
      if (key in memory) return memory[key];
      try {
        return disk()?.getItem(key) ?? null;
      } catch {
        return null; // blocked
      }
    },
    set(key, value) {
      // Memory holds only what storage refused, so a key another tab erased
      // (a denial there) does not come back from here.
      try {
        const storage = disk();
        if (storage) {
          storage.setItem(key, value);
          delete memory[key];
          return;
        }
      } catch { /* blocked or full */ }
      memory[key] = value;
    },
    del(key) {
      delete memory[key];
      try {
        disk()?.removeItem(key);
      } catch { /* nothing to erase */ }
    },
  };
}
