# Firmware-only modules: the app, its links (USB serial, later BLE), buttons and storage.
# Hardware objects are created in app.main() only and passed in everywhere else.
