// The sandbox's fixed directories. They are data, not stored rows: every railyard serves the
// same institutions and VASPs, so a test can rely on them. (Real names, chosen to cover
// every currency of the account-type table; no real routing happens.)

export interface InstitutionRow {
  bankName: string;
  displayName: string;
  country: string;
  currency: string;
}

/** [country, currency, [bankName, displayName][]] */
const CORRIDORS: [string, string, [string, string][]][] = [
  [
    'AE',
    'AED',
    [
      ['Emirates NBD', 'Emirates NBD'],
      ['First Abu Dhabi Bank', 'First Abu Dhabi Bank'],
    ],
  ],
  [
    'BD',
    'BDT',
    [
      ['bKash', 'bKash'],
      ['Dutch-Bangla Bank', 'Dutch-Bangla Bank'],
    ],
  ],
  [
    'BR',
    'BRL',
    [
      ['Nubank', 'Nubank'],
      ['Itau Unibanco', 'Itaú Unibanco'],
      ['Banco do Brasil', 'Banco do Brasil'],
      ['Bradesco', 'Bradesco'],
    ],
  ],
  [
    'BW',
    'BWP',
    [
      ['First National Bank Botswana', 'First National Bank Botswana'],
      ['Orange Money Botswana', 'Orange Money Botswana'],
    ],
  ],
  [
    'CA',
    'CAD',
    [
      ['RBC Royal Bank', 'RBC Royal Bank'],
      ['TD Canada Trust', 'TD Canada Trust'],
      ['Scotiabank', 'Scotiabank'],
    ],
  ],
  [
    'CM',
    'XAF',
    [
      ['MTN Mobile Money Cameroon', 'MTN Mobile Money Cameroon'],
      ['Orange Money Cameroon', 'Orange Money Cameroon'],
    ],
  ],
  [
    'CN',
    'CNY',
    [
      ['ICBC', 'Industrial and Commercial Bank of China'],
      ['China Construction Bank', 'China Construction Bank'],
    ],
  ],
  [
    'CO',
    'COP',
    [
      ['Bancolombia', 'Bancolombia'],
      ['Davivienda', 'Davivienda'],
      ['Nequi', 'Nequi'],
    ],
  ],
  [
    'DE',
    'EUR',
    [
      ['Deutsche Bank', 'Deutsche Bank'],
      ['Commerzbank', 'Commerzbank'],
      ['N26', 'N26'],
    ],
  ],
  [
    'DK',
    'DKK',
    [
      ['Danske Bank', 'Danske Bank'],
      ['Nordea Denmark', 'Nordea Denmark'],
    ],
  ],
  [
    'EG',
    'EGP',
    [
      ['National Bank of Egypt', 'National Bank of Egypt'],
      ['Banque Misr', 'Banque Misr'],
    ],
  ],
  [
    'ES',
    'EUR',
    [
      ['Banco Santander', 'Banco Santander'],
      ['BBVA', 'BBVA'],
    ],
  ],
  [
    'FR',
    'EUR',
    [
      ['BNP Paribas', 'BNP Paribas'],
      ['Societe Generale', 'Société Générale'],
    ],
  ],
  [
    'GB',
    'GBP',
    [
      ['Barclays', 'Barclays'],
      ['HSBC UK', 'HSBC UK'],
      ['Lloyds Bank', 'Lloyds Bank'],
      ['Monzo', 'Monzo'],
    ],
  ],
  [
    'GH',
    'GHS',
    [
      ['MTN Mobile Money Ghana', 'MTN Mobile Money Ghana'],
      ['GCB Bank', 'GCB Bank'],
      ['Ecobank Ghana', 'Ecobank Ghana'],
    ],
  ],
  [
    'GT',
    'GTQ',
    [
      ['Banco Industrial', 'Banco Industrial'],
      ['Banrural', 'Banrural'],
    ],
  ],
  [
    'HK',
    'HKD',
    [
      ['HSBC Hong Kong', 'HSBC Hong Kong'],
      ['Bank of China Hong Kong', 'Bank of China (Hong Kong)'],
    ],
  ],
  [
    'HT',
    'HTG',
    [
      ['Unibank', 'Unibank'],
      ['Sogebank', 'Sogebank'],
    ],
  ],
  [
    'ID',
    'IDR',
    [
      ['Bank Central Asia', 'Bank Central Asia'],
      ['Bank Mandiri', 'Bank Mandiri'],
    ],
  ],
  [
    'IN',
    'INR',
    [
      ['State Bank of India', 'State Bank of India'],
      ['HDFC Bank', 'HDFC Bank'],
      ['ICICI Bank', 'ICICI Bank'],
    ],
  ],
  [
    'JM',
    'JMD',
    [
      ['National Commercial Bank Jamaica', 'National Commercial Bank Jamaica'],
      ['Scotiabank Jamaica', 'Scotiabank Jamaica'],
    ],
  ],
  [
    'KE',
    'KES',
    [
      ['M-Pesa', 'M-Pesa'],
      ['Equity Bank', 'Equity Bank'],
      ['KCB Bank', 'KCB Bank'],
    ],
  ],
  [
    'MW',
    'MWK',
    [
      ['National Bank of Malawi', 'National Bank of Malawi'],
      ['Airtel Money Malawi', 'Airtel Money Malawi'],
    ],
  ],
  [
    'MX',
    'MXN',
    [
      ['BBVA Mexico', 'BBVA México'],
      ['Banorte', 'Banorte'],
      ['Santander Mexico', 'Santander México'],
      ['Banco Azteca', 'Banco Azteca'],
    ],
  ],
  [
    'MY',
    'MYR',
    [
      ['Maybank', 'Maybank'],
      ['CIMB Bank', 'CIMB Bank'],
    ],
  ],
  [
    'NG',
    'NGN',
    [
      ['Access Bank', 'Access Bank'],
      ['Guaranty Trust Bank', 'Guaranty Trust Bank'],
      ['Zenith Bank', 'Zenith Bank'],
      ['OPay', 'OPay'],
    ],
  ],
  [
    'NL',
    'EUR',
    [
      ['ING', 'ING'],
      ['ABN AMRO', 'ABN AMRO'],
    ],
  ],
  [
    'PH',
    'PHP',
    [
      ['GCash', 'GCash'],
      ['Maya', 'Maya'],
      ['BDO Unibank', 'BDO Unibank'],
      ['BPI', 'Bank of the Philippine Islands'],
    ],
  ],
  [
    'PK',
    'PKR',
    [
      ['Habib Bank Limited', 'Habib Bank Limited'],
      ['JazzCash', 'JazzCash'],
      ['Easypaisa', 'Easypaisa'],
    ],
  ],
  [
    'RW',
    'RWF',
    [
      ['MTN MoMo Rwanda', 'MTN MoMo Rwanda'],
      ['Bank of Kigali', 'Bank of Kigali'],
    ],
  ],
  [
    'SG',
    'SGD',
    [
      ['DBS Bank', 'DBS Bank'],
      ['OCBC Bank', 'OCBC Bank'],
    ],
  ],
  [
    'SN',
    'XOF',
    [
      ['Orange Money Senegal', 'Orange Money Senegal'],
      ['Wave Senegal', 'Wave Senegal'],
    ],
  ],
  [
    'SV',
    'USD',
    [
      ['Banco Agricola', 'Banco Agrícola'],
      ['Banco Cuscatlan', 'Banco Cuscatlán'],
    ],
  ],
  [
    'TH',
    'THB',
    [
      ['Bangkok Bank', 'Bangkok Bank'],
      ['Kasikornbank', 'Kasikornbank'],
    ],
  ],
  [
    'TZ',
    'TZS',
    [
      ['M-Pesa Tanzania', 'M-Pesa Tanzania'],
      ['CRDB Bank', 'CRDB Bank'],
    ],
  ],
  [
    'UG',
    'UGX',
    [
      ['MTN Mobile Money Uganda', 'MTN Mobile Money Uganda'],
      ['Airtel Money Uganda', 'Airtel Money Uganda'],
      ['Stanbic Bank Uganda', 'Stanbic Bank Uganda'],
    ],
  ],
  [
    'US',
    'USD',
    [
      ['JPMorgan Chase Bank', 'Chase'],
      ['Bank of America', 'Bank of America'],
      ['Wells Fargo Bank', 'Wells Fargo'],
      ['Citibank', 'Citi'],
    ],
  ],
  [
    'VN',
    'VND',
    [
      ['Vietcombank', 'Vietcombank'],
      ['Techcombank', 'Techcombank'],
    ],
  ],
  [
    'ZA',
    'ZAR',
    [
      ['Standard Bank', 'Standard Bank'],
      ['First National Bank', 'FNB'],
      ['Capitec Bank', 'Capitec Bank'],
    ],
  ],
  [
    'ZM',
    'ZMW',
    [
      ['Zanaco', 'Zanaco'],
      ['Airtel Money Zambia', 'Airtel Money Zambia'],
    ],
  ],
];

export const INSTITUTIONS: readonly InstitutionRow[] = CORRIDORS.flatMap(([country, currency, entries]) =>
  entries.map(([bankName, displayName]) => ({ bankName, displayName, country, currency })),
);

export interface VaspRow {
  vaspName: string;
  url: string;
}

export const VASPS: readonly VaspRow[] = [
  { vaspName: 'Binance', url: 'https://www.binance.com' },
  { vaspName: 'Bitfinex', url: 'https://www.bitfinex.com' },
  { vaspName: 'Bitpanda', url: 'https://www.bitpanda.com' },
  { vaspName: 'Bitso', url: 'https://bitso.com' },
  { vaspName: 'Bitstamp', url: 'https://www.bitstamp.net' },
  { vaspName: 'Bybit', url: 'https://www.bybit.com' },
  { vaspName: 'Coinbase', url: 'https://www.coinbase.com' },
  { vaspName: 'Crypto.com', url: 'https://crypto.com' },
  { vaspName: 'Gemini', url: 'https://www.gemini.com' },
  { vaspName: 'Kraken', url: 'https://www.kraken.com' },
  { vaspName: 'KuCoin', url: 'https://www.kucoin.com' },
  { vaspName: 'Luno', url: 'https://www.luno.com' },
  { vaspName: 'Mercado Bitcoin', url: 'https://www.mercadobitcoin.com.br' },
  { vaspName: 'OKX', url: 'https://www.okx.com' },
  { vaspName: 'Upbit', url: 'https://upbit.com' },
];
