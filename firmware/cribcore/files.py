# Files a board keeps on its flash's file system that the host writes too: one home for their
# names (the firmware reads them at start; `cribboard deploy` puts them there). Small on purpose:
# every board loads it, with or without the features the files are for.

HALL_CONFIG = "hall.json"  # a club hall's table settings (cribboard deploy --broker)
WIFI_CONFIG = (
    "wifi.json"  # the network a Wi-Fi board joins for its own page (cribboard deploy --wifi)
)
