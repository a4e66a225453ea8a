import helper from "systray2/traybin/tray_windows_release.exe" with { type: "file" };

/** The tray helper for Windows, embedded (helper-binary.ts loads only the target system's). */
export default helper;
