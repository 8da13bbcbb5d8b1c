// Role ordering used to show or hide actions; the server enforces the same
// order (admin > operator > user > viewer) in its permission table.
import type { Role } from '../api/types';

const rank: Record<Role, number> = { admin: 4, operator: 3, user: 2, viewer: 1, agent: 0 };

export function atLeast(role: Role | undefined, min: Role): boolean {
  return role !== undefined && rank[role] >= rank[min];
}
