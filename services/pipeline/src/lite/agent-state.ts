export type AgentStateName = "idle" | "listening" | "talking";

/**
 * The avatar's state as `agent.state_updated` reports it: talking while an utterance plays, else
 * listening while the client asked it to listen, else idle. Every change is reported once.
 */
export class AgentState {
  private current: AgentStateName = "idle";
  private listening = false;
  private talking = false;

  constructor(private readonly changed: (state: AgentStateName, previous: AgentStateName) => void) {}

  get state(): AgentStateName {
    return this.current;
  }

  setListening(on: boolean): void {
    this.listening = on;
    this.update();
  }

  setTalking(on: boolean): void {
    this.talking = on;
    this.update();
  }

  private update(): void {
    const next: AgentStateName = this.talking ? "talking" : this.listening ? "listening" : "idle";
    if (next === this.current) return;
    const previous = this.current;
    this.current = next;
    this.changed(next, previous);
  }
}
