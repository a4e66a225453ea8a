// A headless stand-in for a browser in the conformance run: GETs the authorization URL and follows
// its redirects, so the code lands on mcpproxy's loopback callback as if a user had approved.
const response = await fetch(process.argv[2], { redirect: "follow" });
await response.text();
