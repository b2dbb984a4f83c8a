// The model's todo list (`write_todos`), shown as a live checklist beside the chat. Each call
// sends the whole list; it replaces the shown one when the call succeeds (core validated it), so
// the checklist is what the model was told it is.
import type { ToolCallStatus } from "../protocol/ToolCallStatus";

/** Gemini CLI 0.61's statuses. */
export type TodoStatus = "pending" | "in_progress" | "completed" | "cancelled" | "blocked";

export interface TodoItem {
  description: string;
  status: TodoStatus;
}

const STATUSES: readonly string[] = ["pending", "in_progress", "completed", "cancelled", "blocked"];

/** The todos of a `write_todos` call's arguments; null when they are not a list of todos. */
export function parseTodos(args: unknown): TodoItem[] | null {
  if (typeof args !== "object" || args === null) return null;
  const todos = (args as { todos?: unknown }).todos;
  if (!Array.isArray(todos)) return null;
  const items: TodoItem[] = [];
  for (const todo of todos) {
    if (typeof todo !== "object" || todo === null) return null;
    const { description, status } = todo as { description?: unknown; status?: unknown };
    if (typeof description !== "string" || typeof status !== "string" || !STATUSES.includes(status)) return null;
    items.push({ description, status: status as TodoStatus });
  }
  return items;
}

export class TodoStore {
  items = $state.raw<TodoItem[]>([]);
  /** Lists of calls that have not finished yet, by call id. */
  private pending = new Map<string, TodoItem[]>();

  requested(callId: string, name: string, args: unknown): void {
    if (name !== "write_todos") return;
    const items = parseTodos(args);
    if (items) this.pending.set(callId, items);
  }

  responded(callId: string, status: ToolCallStatus): void {
    const items = this.pending.get(callId);
    if (!items) return;
    this.pending.delete(callId);
    if (status === "success") this.items = items;
  }

  get done(): number {
    return this.items.filter((t) => t.status === "completed").length;
  }

  clear(): void {
    this.items = [];
    this.pending.clear();
  }
}
