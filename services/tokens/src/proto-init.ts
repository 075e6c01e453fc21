import type { DescMessage, MessageInitShape, MessageShape } from "@bufbuild/protobuf";

/** The plain-object init of a message (not a built one), so partial inits can be spread together. */
export type PlainInit<Desc extends DescMessage> = Exclude<MessageInitShape<Desc>, MessageShape<Desc>>;
