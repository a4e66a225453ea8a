import helper from "systray2/traybin/tray_linux_release" with { type: "file" };

/** The tray helper for Linux, embedded (helper-binary.ts loads only the target system's). */
export default helper;
