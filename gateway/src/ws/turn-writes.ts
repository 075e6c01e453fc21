/** What a socket offers to hold its writes back: node's stream cork and uncork. */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

/**
 * Holds a socket's writes until the end of the current turn (process.nextTick), so that what is sent
 * to it in one turn leaves in one write system call. The frames of a session that reach the gateway
 * together (a LITE turn's end is four events, its acknowledgement and the next chunk's two more) were
 * one call each, and on this VM a call costs its writer far more than the frame's bytes do. A lone
 * frame goes out as soon as the code that sent it returns: no timer, no later turn.
 */
export function turnWrites(socket: Corkable): () => void {
  let held = false;
  const release = () => {
    held = false;
    socket.uncork();
  };
  return () => {
    if (held) return;
    held = true;
    socket.cork();
    process.nextTick(release);
  };
}
