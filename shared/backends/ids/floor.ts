import type { TopicPosition } from './blocks-topic.js';

/**
 * The floor rule: what keeps a block of a topic that cannot be trusted (a first start, a topic
 * deleted and created again, Redis lost the marker) above every id already issued. Pure, so every
 * case is a unit test (test/unit/shared/backends/ids/floor.unit.test.ts); scale-out/index.ts gives
 * it Redis and the stored ids.
 */

/**
 * The floor blocks of this topic must be taken under: ids of the topic's next block start at
 * floor + nextOffset·B + 1, and must be at least `margin` above the highest id stored anywhere
 * (which covers ids other gateways still hold from an older topic). Never lowers `floor`; with no id
 * stored at all there is nothing to stay above.
 */
export function floorAbove(highestStored: bigint, margin: bigint, nextOffset: bigint, blockSize: number, floor: bigint): bigint {
  if (highestStored <= 0n) return floor;
  const needed = highestStored + margin - nextOffset * BigInt(blockSize);
  return needed > floor ? needed : floor;
}

/** The Redis marker of an id-blocks topic checked against the stored ids: its topic id and the floor it was checked to. */
export function checkedMarker(topicId: string, floor: bigint): string {
  return `${topicId} ${floor}`;
}

/**
 * The floor to use for a topic another gateway already checked (the higher of the marker's and
 * `floor`), or null when the marker is of another topic, missing, or of a release that wrote no
 * floor: then the topic must be checked here.
 */
export function floorCheckedBefore(marker: string | null, topicId: string, floor: bigint): bigint | null {
  const [checkedTopic, checkedFloor] = (marker ?? '').split(' ');
  if (checkedTopic !== topicId || checkedFloor === undefined || !/^\d+$/.test(checkedFloor)) return null;
  const agreed = BigInt(checkedFloor);
  return agreed > floor ? agreed : floor;
}

/** What checking a topic needs: the marker (in Redis), the highest stored id, the margin. */
export interface TopicCheckDeps {
  readMarker(): Promise<string | null>;
  writeMarker(marker: string): Promise<void>;
  /** The highest event id stored anywhere durable (highest-stored.ts). */
  highestStored(): Promise<bigint>;
  /** ID_RECOVERY_MARGIN. */
  margin: bigint;
  topic: string;
  logger: { warn(o: object, m: string): void };
}

/**
 * The `verify` of the allocator: a topic another gateway already checked (its marker names this
 * topic id) gives the higher of its floor and ours; any other is checked against the stored ids,
 * raised when it is behind them, and marked. The marker is set only after the floor is known, and
 * a gateway that finds it still takes the marker's floor: the checker sets it before any of its
 * block records carries the raised floor (trusting the topic id alone issued ids twice in a CI run).
 */
export function topicCheck(deps: TopicCheckDeps): (position: TopicPosition, floor: bigint, blockSize: number) => Promise<bigint> {
  return async (position, floor, blockSize) => {
    const agreed = floorCheckedBefore(await deps.readMarker(), position.topicId, floor);
    if (agreed !== null) return agreed;
    const highest = await deps.highestStored();
    const raised = floorAbove(highest, deps.margin, position.end, blockSize, floor);
    if (raised !== floor) {
      deps.logger.warn(
        { topic: deps.topic, nextOffset: position.end.toString(), highestStored: highest.toString(), from: floor.toString(), to: raised.toString() },
        `event-id floor raised to ${raised}: the id-blocks topic was not known to be ahead of the stored ids`,
      );
    }
    await deps.writeMarker(checkedMarker(position.topicId, raised));
    return raised;
  };
}
