# Firmware-only modules: the app, the dispatcher and its verbs, the links (USB serial, Bluetooth
# LE and the phone's pad), the buttons, who may change the score (admission), what is kept on the
# flash (the store, its records and their ring) and a Wi-Fi board's hall client. Hardware objects
# are created in app.main() only and passed in everywhere else.
