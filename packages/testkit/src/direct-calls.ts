/**
 * Calls a service implementation's functions directly (no transport): each call builds the request
 * message, a HandlerContext for the method, and returns the response as the message a client would get.
 */
import type { DescMethodUnary, DescService, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { create } from "@bufbuild/protobuf";
import { createHandlerContext, type ServiceImpl } from "@connectrpc/connect";

export type DirectCalls<S extends DescService> = {
  [K in keyof S["method"]]-?: S["method"][K] extends DescMethodUnary<infer I, infer O>
    ? (request?: MessageInitShape<I>) => Promise<MessageShape<O>>
    : never;
};

export function callDirectly<S extends DescService>(
  service: S,
  impl: Partial<ServiceImpl<S>>,
): DirectCalls<S> {
  const calls: Record<string, unknown> = {};
  for (const method of service.methods) {
    if (method.methodKind !== "unary") continue;
    calls[method.localName] = async (request: object = {}) => {
      const fn = (impl as Record<string, unknown>)[method.localName];
      if (typeof fn !== "function") throw new Error(`${method.name} is not implemented`);
      const context = createHandlerContext({
        service,
        method,
        protocolName: "direct",
        requestMethod: "POST",
        url: `/${service.typeName}/${method.name}`,
      });
      const response = await fn.call(impl, create(method.input, request as never), context);
      return create(method.output, response);
    };
  }
  return calls as DirectCalls<S>;
}
