import type { SessionContext } from "../realtime/mode.js";

export type AgentStateName = "idle" | "listening" | "talking";

/** What the avatar's state follows. */
export interface StateInputs {
  /** The avatar's audio is playing. */
  talking: boolean;
  /** User audio is being taken (listening enabled, and in push-to-talk sessions a push in progress). */
  listening: boolean;
}

/** `agent.state_updated {state, previous_state}` on every change of the derived state. */
export class AgentState {
  private current: AgentStateName = "idle";

  constructor(private readonly ctx: SessionContext) {}

  get state(): AgentStateName {
    return this.current;
  }

  update(inputs: StateInputs): void {
    const next: AgentStateName = inputs.talking ? "talking" : inputs.listening ? "listening" : "idle";
    if (next === this.current) return;
    const previous = this.current;
    this.current = next;
    this.ctx.send({ type: "agent.state_updated", state: next, previous_state: previous });
  }

  /** The current state to one connection (a client that reconnected). */
  announce(connectionId: string): void {
    this.ctx.send(
      { type: "agent.state_updated", state: this.current, previous_state: this.current },
      connectionId,
    );
  }
}
