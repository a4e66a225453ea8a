/**
 * The response, calling `release` once when its body has been sent, or abandoned by the client.
 * Ties what a streamed HTTP answer holds (a slot counted against `maxSessions`, a listen stream's
 * upstream subscriptions) to the life of its body rather than of its handler: a modern request's
 * answer may stream for as long as the tool runs, a listen stream's for as long as it lasts.
 */
export function releasedAtEnd(response: Response, release: () => void): Response {
  let released = false;
  const once = () => {
    if (released) return;
    released = true;
    release();
  };
  if (!response.body) {
    once();
    return response;
  }
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          once();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        once();
        controller.error(error);
      }
    },
    async cancel(reason) {
      once();
      await reader.cancel(reason).catch(() => undefined);
    },
  });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
