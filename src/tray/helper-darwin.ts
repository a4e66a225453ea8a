import helper from "systray2/traybin/tray_darwin_release" with { type: "file" };

/** The tray helper for macOS, embedded (helper-binary.ts loads only the target system's). */
export default helper;
