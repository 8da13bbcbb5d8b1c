// The member cluster chosen in the header's cluster switch ('' = all),
// remembered in localStorage and shared by every component that reads it.
import { useSyncExternalStore } from 'react';

const KEY = 'heteroflow.cluster';
const listeners = new Set<() => void>();

function read(): string {
  try {
    return localStorage.getItem(KEY) ?? '';
  } catch {
    return '';
  }
}

let current = read();

/** setCurrentCluster chooses a member ('' for all) and tells every reader. */
export function setCurrentCluster(name: string): void {
  current = name;
  try {
    if (name) localStorage.setItem(KEY, name);
    else localStorage.removeItem(KEY);
  } catch {
    // Storage disabled: the choice lasts for this page.
  }
  listeners.forEach((l) => l());
}

/** currentCluster is the chosen member's name, '' for all (outside React). */
export function currentCluster(): string {
  return current;
}

/** useCurrentCluster is the chosen member's name, '' for all. */
export function useCurrentCluster(): string {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => current,
  );
}
