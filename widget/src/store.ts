/// <reference lib="dom" />
/**
 * localStorage with an in-memory copy: when storage is blocked (or fails
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
      try {
        const value = disk()?.getItem(key);
        if (value != null) return value;
      } catch { /* blocked: memory answers */ }
      return key in memory ? memory[key] : null;
    },
    set(key, value) {
      memory[key] = value;
      try {
        disk()?.setItem(key, value);
      } catch { /* blocked or full: memory keeps it */ }
    },
    del(key) {
      delete memory[key];
      try {
        disk()?.removeItem(key);
      } catch { /* nothing to erase */ }
    },
  };
}
