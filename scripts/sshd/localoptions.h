#define SFTPSERVER_PATH "/opt/bai/bin/sftp-server"
#define DROPBEAR_SVR_PASSWORD_AUTH 0
#define DROPBEAR_X11FWD 0
#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define RSA_PRIV_FILENAME "/opt/bai/run/dropbear_rsa_host_key"
#define ECDSA_PRIV_FILENAME "/opt/bai/run/dropbear_ecdsa_host_key"
#define ED25519_PRIV_FILENAME "/opt/bai/run/dropbear_ed25519_host_key"
#define DSS_PRIV_FILENAME "/opt/bai/run/dropbear_dss_host_key"
#define BAI_AUTHORIZED_KEYS_FILES "/opt/bai/run/authorized_keys", "/opt/bai/run/cluster_authorized_keys"
