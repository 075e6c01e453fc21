/**
 * The sockets of one session as its gateways report them: opened, closed, and heard from (a heartbeat or
 * a message). A socket not heard from for the timeout counts as closed: its gateway died without saying so.
 */
export class Connections {
  private readonly lastSeen = new Map<string, number>();
  private everConnected = false;

  get size(): number {
    return this.lastSeen.size;
  }

  /** Whether a client has ever connected to the session. */
  get hadAny(): boolean {
    return this.everConnected;
  }

  has(id: string): boolean {
    return this.lastSeen.has(id);
  }

  ids(): string[] {
    return [...this.lastSeen.keys()];
  }

  /** Records a socket as open; answers true when it was not known (a new connection). */
  open(id: string, now: number): boolean {
    const known = this.lastSeen.has(id);
    this.lastSeen.set(id, now);
    this.everConnected = true;
    return !known;
  }

  /** Answers true when the socket was open. */
  close(id: string): boolean {
    return this.lastSeen.delete(id);
  }

  /** Counts every socket as heard from at `now` (nothing could be heard while the bus was down). */
  refresh(now: number): void {
    for (const id of this.lastSeen.keys()) this.lastSeen.set(id, now);
  }

  /** Removes and answers the sockets not heard from since `now - timeoutMs`. */
  expire(now: number, timeoutMs: number): string[] {
    const gone: string[] = [];
    for (const [id, seen] of this.lastSeen) {
      if (now - seen >= timeoutMs) gone.push(id);
    }
    for (const id of gone) this.lastSeen.delete(id);
    return gone;
  }
}
